"""Security properties: workspace confinement, private files, secrets, approval modes."""
