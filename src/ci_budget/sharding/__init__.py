"""Which files run in which shard: selection of a suite's files and sglang's LPT shard planner. Pure."""
