"""dyncli suggest."""
