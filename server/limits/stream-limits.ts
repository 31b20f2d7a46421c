// The bounds of everything kapi decodes on an upgraded connection (SPDY, WebSocket, the head
// of a backend's HTTP response). A peer that sends more than these gets its connection
// closed; nothing it sends is buffered beyond them. This module imports nothing.

/** the largest SPDY frame payload accepted (the protocol allows 16 MiB; clients write 32 KiB) */
export const MAX_SPDY_FRAME_BYTES = 1024 * 1024;

/** the most bytes a decompressed SPDY header block may have */
export const MAX_SPDY_HEADER_BLOCK_BYTES = 256 * 1024;

/** the most name/value pairs in one SPDY header block */
export const MAX_SPDY_HEADERS = 1000;

/** the most SPDY streams one connection may have open at once */
export const MAX_SPDY_STREAMS = 1000;

/** the largest WebSocket message (all of its fragments together) accepted */
export const MAX_WEBSOCKET_MESSAGE_BYTES = 4 * 1024 * 1024;

/** the largest HTTP response head read from a backend before its body or upgraded stream */
export const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;

/** bytes queued towards a slow reader before the other side is paused */
export const STREAM_HIGH_WATER_BYTES = 1024 * 1024;
