// The names of Kubernetes' remote command and port-forward stream protocols, as kubectl and
// the kubelet negotiate them (X-Stream-Protocol-Version on SPDY, the WebSocket subprotocol).

/** the WebSocket protocol with stream half-close (kubectl 1.30+ exec and attach) */
export const CHANNEL_V5 = 'v5.channel.k8s.io';

/** what kapi offers a kubelet over SPDY when it translates a v5 WebSocket (v4 reports exit codes) */
export const SPDY_REMOTE_COMMAND_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];

/** the prefix of a WebSocket subprotocol that tunnels a SPDY protocol (kubectl 1.30+ port-forward) */
export const SPDY_TUNNELING_PREFIX = 'SPDY/3.1+';
export const KUBERNETES_PROTOCOL_SUFFIX = '.k8s.io';

export const STREAM_TYPE_ERROR = 'error';
export const STREAM_TYPE_STDIN = 'stdin';
export const STREAM_TYPE_STDOUT = 'stdout';
export const STREAM_TYPE_STDERR = 'stderr';
export const STREAM_TYPE_RESIZE = 'resize';

/** channel numbers of the channel.k8s.io WebSocket protocols */
export const CHANNEL_STDIN = 0;
export const CHANNEL_STDOUT = 1;
export const CHANNEL_STDERR = 2;
export const CHANNEL_ERROR = 3;
export const CHANNEL_RESIZE = 4;
/** v5: a message on this channel closes the channel named by its next byte */
export const CHANNEL_CLOSE = 255;
