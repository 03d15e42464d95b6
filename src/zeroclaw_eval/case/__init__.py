"""Cases: a fixture file becomes an admitted case, a directory a suite."""
