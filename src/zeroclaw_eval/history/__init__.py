"""The run history: the SQLite store, run's recorder, comparison and trends."""
