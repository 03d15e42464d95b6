"""The agent under test: the kind, the reference loop, and agents reached over HTTP."""
