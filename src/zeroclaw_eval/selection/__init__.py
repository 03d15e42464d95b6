"""Which cases run: PATH arguments, -k, --shard, and merging shard reports."""
