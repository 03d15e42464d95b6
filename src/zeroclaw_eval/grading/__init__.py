"""Grading: the expectation family kind and the run record it reads."""
