"""The second simulator: Batsim's protocol codec, the Batsim-protocol server and the PyBatsim adapter."""
