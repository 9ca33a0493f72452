"""The web table (issue 26): phones as microphones and controllers, a board for the room.

`server` serves it (HTTPS, WebSocket, the /trust page), `room` joins it to a PlaySession,
`snapshot` turns the table into JSON, `protocol` checks every message, `certs` makes the
certificates. The contract between the parts is docs/web.md."""
