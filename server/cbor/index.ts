// kube's CBOR profile (the application/cbor media type and CBOR storage).
export { CborDecodeError, decodeCbor, decodeStoredCbor, startsWithSelfDescribedTag } from './decode.js';
export { encodeCbor, encodeCborKeepingOrder } from './encode.js';
