import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeLiteral, encodeStaticIndexed, HpackDecoder, HpackError } from './hpack.js';

// RFC 7541 Appendix C: header blocks of one connection in order, what each decodes to, and
// the dynamic table's size afterwards
interface Vector {
  hex: string;
  fields: [string, string][];
  tableSize: number;
}

const REQUEST_FIELDS: [string, string][][] = [
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
  ],
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
    ['cache-control', 'no-cache'],
  ],
  [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':path', '/index.html'],
    [':authority', 'www.example.com'],
    ['custom-key', 'custom-value'],
  ],
];

const RESPONSE_FIELDS: [string, string][][] = [
  [
    [':status', '302'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
    ['location', 'https://www.example.com'],
  ],
  [
    [':status', '307'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
    ['location', 'https://www.example.com'],
  ],
  [
    [':status', '200'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
    ['location', 'https://www.example.com'],
    ['content-encoding', 'gzip'],
    ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
  ],
];

const C3: Vector[] = [
  { hex: '828684410f7777772e6578616d706c652e636f6d', fields: REQUEST_FIELDS[0]!, tableSize: 57 },
  { hex: '828684be58086e6f2d6361636865', fields: REQUEST_FIELDS[1]!, tableSize: 110 },
  { hex: '828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565', fields: REQUEST_FIELDS[2]!, tableSize: 164 },
];

const C4: Vector[] = [
  { hex: '828684418cf1e3c2e5f23a6ba0ab90f4ff', fields: REQUEST_FIELDS[0]!, tableSize: 57 },
  { hex: '828684be5886a8eb10649cbf', fields: REQUEST_FIELDS[1]!, tableSize: 110 },
  { hex: '828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf', fields: REQUEST_FIELDS[2]!, tableSize: 164 },
];

const C5: Vector[] = [
  {
    hex:
      '4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d54' +
      '6e1768747470733a2f2f7777772e6578616d706c652e636f6d',
    fields: RESPONSE_FIELDS[0]!,
    tableSize: 222,
  },
  { hex: '4803333037c1c0bf', fields: RESPONSE_FIELDS[1]!, tableSize: 222 },
  {
    hex:
      '88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f' +
      '3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b207665' +
      '7273696f6e3d31',
    fields: RESPONSE_FIELDS[2]!,
    tableSize: 215,
  },
];

const C6: Vector[] = [
  {
    hex: '488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b' + '97c8e9ae82ae43d3',
    fields: RESPONSE_FIELDS[0]!,
    tableSize: 222,
  },
  { hex: '4883640effc1c0bf', fields: RESPONSE_FIELDS[1]!, tableSize: 222 },
  {
    hex:
      '88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdf' +
      'cd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007',
    fields: RESPONSE_FIELDS[2]!,
    tableSize: 215,
  },
];

function pairs(flat: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

function decodeAll(vectors: Vector[], tableSize: number): HpackDecoder {
  const decoder = new HpackDecoder(tableSize);
  vectors.forEach((v, i) => {
    assert.deepEqual(pairs(decoder.decode(Buffer.from(v.hex, 'hex'))), v.fields, `block ${i + 1}`);
    assert.equal(decoder.dynamicTableSize, v.tableSize, `table size after block ${i + 1}`);
  });
  return decoder;
}

test('RFC 7541 C.3: requests without Huffman coding', () => {
  const decoder = decodeAll(C3, 4096);
  assert.deepEqual(decoder.dynamicTable, [
    ['custom-key', 'custom-value'],
    ['cache-control', 'no-cache'],
    [':authority', 'www.example.com'],
  ]);
});

test('RFC 7541 C.4: requests with Huffman coding', () => {
  const decoder = decodeAll(C4, 4096);
  assert.deepEqual(decoder.dynamicTable, [
    ['custom-key', 'custom-value'],
    ['cache-control', 'no-cache'],
    [':authority', 'www.example.com'],
  ]);
});

const EVICTED_TABLE = [
  ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
  ['content-encoding', 'gzip'],
  ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
];

test('RFC 7541 C.5: responses without Huffman coding, with eviction from a 256-byte table', () => {
  assert.deepEqual(decodeAll(C5, 256).dynamicTable, EVICTED_TABLE);
});

test('RFC 7541 C.6: responses with Huffman coding, with eviction from a 256-byte table', () => {
  assert.deepEqual(decodeAll(C6, 256).dynamicTable, EVICTED_TABLE);
});

test('RFC 7541 C.2.3: a never-indexed literal leaves the table empty', () => {
  const decoder = new HpackDecoder();
  assert.deepEqual(decoder.decode(Buffer.from('100870617373776f726406736563726574', 'hex')), ['password', 'secret']);
  assert.equal(decoder.dynamicTableSize, 0);
});

test('a dynamic table size update evicts, and may not exceed the announced size', () => {
  const decoder = new HpackDecoder(4096);
  decoder.decode(Buffer.from(C3[0]!.hex, 'hex'));
  assert.equal(decoder.dynamicTableSize, 57);
  // size 0 (0x20) then back to 4096 (0x3f e1 1f): the entry is gone
  decoder.decode(Buffer.from('203fe11f', 'hex'));
  assert.equal(decoder.dynamicTableSize, 0);
  assert.throws(() => decoder.decode(Buffer.from('be', 'hex')), HpackError);
  // 4097 is more than this decoder allows
  assert.throws(() => decoder.decode(Buffer.from('3fe21f', 'hex')), HpackError);
});

test('malformed blocks are errors: truncated integer, EOS in a Huffman string, bad padding', () => {
  assert.throws(() => new HpackDecoder().decode(Buffer.from('ff', 'hex')), HpackError);
  // :authority (name index 1) with a Huffman value of 32 one bits: EOS (30 ones) inside
  assert.throws(() => new HpackDecoder().decode(Buffer.from('0184ffffffff', 'hex')), HpackError);
  // "a" is 00011 (5 bits): padded with zeros instead of ones, then correctly
  assert.throws(() => new HpackDecoder().decode(Buffer.from('018118', 'hex')), HpackError);
  assert.deepEqual(new HpackDecoder().decode(Buffer.from('01811f', 'hex')), [':authority', 'a']);
});

test('the encoder: static indexes where the table has the field, literals never Huffman-coded', () => {
  assert.deepEqual(encodeStaticIndexed(':method', 'POST'), Buffer.from([0x83]));
  assert.deepEqual(encodeStaticIndexed(':scheme', 'https'), Buffer.from([0x87]));
  assert.throws(() => encodeStaticIndexed(':method', 'PUT'));
  // literal without indexing, name index 4 (:path)
  assert.deepEqual(encodeLiteral(':path', '/a'), Buffer.from([0x04, 0x02, 0x2f, 0x61]));
  const long = 'x'.repeat(300);
  const block = Buffer.concat([
    encodeStaticIndexed(':method', 'POST'),
    encodeLiteral(':path', '/etcdserverpb.KV/Range'),
    encodeLiteral('content-type', 'application/grpc'),
    encodeLiteral('te', 'trailers'),
    encodeLiteral('grpc-timeout', '15000m'),
    encodeLiteral('x-long', long),
  ]);
  const decoder = new HpackDecoder();
  assert.deepEqual(pairs(decoder.decode(block)), [
    [':method', 'POST'],
    [':path', '/etcdserverpb.KV/Range'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ['grpc-timeout', '15000m'],
    ['x-long', long],
  ]);
  assert.equal(decoder.dynamicTableSize, 0);
});
