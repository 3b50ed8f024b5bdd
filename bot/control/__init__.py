"""The local control socket: CLI commands reach a running bot through `DATA_DIR/control.sock`.

`protocol` frames newline-delimited JSON; `output` is where a command's lines go (a terminal,
or the socket back to the CLI); `operations` holds the commands' bodies, run the same way in
the CLI's own process and in the bot; `server` serves the socket beside the edges;
`client` is the CLI's side.
"""
