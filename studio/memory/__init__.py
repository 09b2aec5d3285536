"""The studio's Memory tab: value scans, the motion-guided finder, signatures and profiles."""
