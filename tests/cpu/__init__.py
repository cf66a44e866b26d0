"""CPU tier: runs on every machine, with or without a GPU; no Triton kernel runs through the
interpreter here."""
