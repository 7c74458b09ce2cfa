"""``claude-code-0``: the Claude adapter (prompts in ``prompts/``, outputs in ``models``)."""
