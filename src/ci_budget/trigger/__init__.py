"""What a GitHub event runs: the decision from an event's payload and the facts the edge fetched (permissions, PR head) to a Plan. Pure."""
