"""Model clients on the official SDKs (optional extra `vlm`), behind one small interface."""
