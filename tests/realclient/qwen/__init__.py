"""Real-client harness for Qwen Code (``@qwen-code/qwen-code``): see README.md."""
