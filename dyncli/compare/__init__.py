"""dyncli compare: join two benchmark runs, test the changes, find regressions."""
