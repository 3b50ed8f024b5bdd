"""A real Matrix homeserver (Synapse, from its own virtualenv) and real nio clients as members,
for the Matrix edge's tests and benchmark."""
