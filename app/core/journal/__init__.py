"""The record: the journal (all SQL), its migrations, the pause file and the reasons rows keep."""
