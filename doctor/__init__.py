"""The doctor: run a training script under a forced start method and explain its crash."""
