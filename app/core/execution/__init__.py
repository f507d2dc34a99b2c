"""Running commands: the executor, the shell session, output, process marks and the bash to use."""
