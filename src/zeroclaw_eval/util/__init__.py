"""Small helpers with no knowledge of the harness: the standard library's kin."""
