"""The Tk windows, each in its own process, and the pipes between them and the tray."""
