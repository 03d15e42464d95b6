"""The default plugins: ordinary plugin modules, registered before any entry point."""
