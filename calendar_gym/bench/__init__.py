"""The benchmark's runs: the demo (the main job) and the Calendar section of evaluation reports."""
