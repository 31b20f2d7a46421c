// kube's CBOR profile (the application/cbor media type and CBOR storage).
export { CborDecodeError, decodeCbor, decodeStoredCbor, startsWithSelfDescribedTag } from './decode.js';
export { encodeCbor, encodeCborKeepingOrder, SELF_DESCRIBED_TAG } from './encode.js';
