"""The local channel between the tray and everyone else: address, transport, peer checks, frames."""
