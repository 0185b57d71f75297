"""dyncli diagnose."""
