"""What the commands share. Modules here import torch only inside functions that bench runs."""
