"""The Bot service every edge calls, settings, errors, the composition root and the CLI."""
