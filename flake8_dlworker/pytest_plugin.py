"""pytest plugin (entry point ``pytest11``): the ``dataloader_doctor`` fixture."""
