"""dyncli bench."""
