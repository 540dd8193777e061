"""Real-client harness for pi (``@mariozechner/pi-coding-agent``): see README.md."""
