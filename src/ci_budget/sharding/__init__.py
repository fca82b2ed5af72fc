"""Which files run in which shard: selection of a suite's files and the shard planners (sglang's LPT and the better one). Pure."""
