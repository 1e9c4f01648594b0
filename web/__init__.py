"""Pages that span apps (the dashboard) and small helpers shared by the web views."""
