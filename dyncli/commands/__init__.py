"""One module per command: option declarations and one call into the core. No logic here."""
