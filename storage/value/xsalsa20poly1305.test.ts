import { test } from 'node:test';
import assert from 'node:assert/strict';
import { poly1305, secretboxOpen, secretboxSeal } from './xsalsa20poly1305.js';

// produced by libsodium 1.0.18's crypto_secretbox_easy (tag | ciphertext, as Go's Seal)
const VECTORS = [
  {
    key: 'a819408ce5010ca2e09ef59ac3d89f5ff8595d02b524e61bf8afa894a95d594f',
    nonce: '648f8e193a06c30767e71fb32a4ab2abee2dc640da96782b',
    message: '',
    sealed: 'b2e9eb3e3da9ad25f99cb7c2cf9ed809',
  },
  {
    key: '8174099687a26621f4e2cdd7cc03b3dacedb3fb962255b1aafd033cabe831530',
    nonce: '0a78009591722cc84825ca95ee7ffa52428047ed12c90760',
    message: '28',
    sealed: '60bd7df75916733db61df167ef738149b4',
  },
  {
    key: 'b10253764c8b233fb37542e23401c7b450e5a6f9751f3b5a014f6f67e8bc999d',
    nonce: '626e1e3b6935c66a2c8ab9c84fc3dd552253090c6e91f594',
    message: 'a78521e49048b6e0d368d3fba417fc',
    sealed: 'd2575afa859b8fcd8f65557ca9d78836475b85210c71f9aa5fcaa420cb19e2',
  },
  {
    key: 'f576104eebeab09651d83acffc77c8b8c6eaa4b767aeab24d7da80f83f51d865',
    nonce: '0f5f924500a4d703b9a480306e2faa6cba900295e5a1144b',
    message: '89da2bd31a5d008c84323c9693f12f09',
    sealed: '9f583ed976b3cb93f063ceaec0b12b4179fe2261cad670c09a2482d4792e469a',
  },
  {
    key: 'a4b3504c2769fce9547f6dda310dd8b094d630a044d65f5324d4b37310aab714',
    nonce: '6970041381069bfeb059842158d5b779445816bb6eb90a5f',
    message: '51b5df22eaeaf7a6101b57cfb45084cb98',
    sealed: 'bcd67dd96a79d61e1b14608839d49486911462111cb3938c75649146409c413c7b',
  },
  {
    key: '07e7394e0702340d9fd1d777fbbad2804a5188d1dd07ff580f473bd7645ff205',
    nonce: '0a99cdf5244ff16a73f4da6273a8e3d2728f433aa3feaf38',
    message:
      '92253243f3471651d425293dfe382cb9017fe15fc46b1deb79e561f5a38f724292253243f3471651d425293dfe382cb9017fe15fc46b1deb79e561f5a38f72',
    sealed:
      'c800a46543fa81b573be12e9eb6973eace21c37b8f0536b17cd86a015ae472e10bade5b94b61c158ec6a63530e0e33e1a16b6b431bb4e2fb3ef03c7ec7b815f5fedbd7ece046e428a44e271f142d8f',
  },
  {
    key: '8dfad052fee5c62957d3ebe1752219a02f45634b2c32a6ac408b26ffcedfb7da',
    nonce: '5df4e9601f82ce317dbbd8aee799f3b4a36a2ad522ca71e5',
    message:
      'cd682266d91f196c09590f35c003fa8aaf01321dcb8cb675c6bc1d70c5b6822bcd682266d91f196c09590f35c003fa8aaf01321dcb8cb675c6bc1d70c5b6822b',
    sealed:
      '1dfaa7cb3028ab6a6ce0672492685fea0a08a9cb6170250c8016f357d74eee87dc5b2500170dfb11487bb2297e8d31f02d20bf7b3fc0fef00dd0b15b22b62351e6e814ae6bfb9d5ff5f2a883e64ed0a3',
  },
  {
    key: '1e3f92d0f678eb83b0bf93855d90699d8ae5dfb4ae023bdf352bd8d93f2060b1',
    nonce: 'e4f85dc8b6539ca709dd518a6fa0bca4b20bac8f2e77641d',
    message:
      'f6bca2ea669a35112ab2a8292f5a88c675cc265e0b7af2e0ae1b9fe080be108ff6bca2ea669a35112ab2a8292f5a88c675cc265e0b7af2e0ae1b9fe080be108ff6',
    sealed:
      'cc04d2e0597a0cb16e6bae312467d2fed8b951259805457a35074f8faeca181c56cfd55d7c62617ab7254a6334f5d53cfa9b6101713ad2125f179bdd7613e23a4d03bca723800b5aa1ff76df5fbfbe833d',
  },
  {
    key: '5bda7a9c0fb9e5102411342f9bedf63f37d8835ee6e903e95dd3050fd15af81c',
    nonce: '5c5c3db578dd5aba852e772432a4de3559acc2cf905b5b54',
    message:
      '231cf49d59380f36c61d1a7b53e95b2cc337bb1c13a935a1e81951e22d248c43231cf49d59380f36c61d1a7b53e95b2cc337bb1c13a935a1e81951e22d248c43231cf49d59380f36c61d1a7b53e95b2cc337bb1c13a935a1e81951e22d248c43231cf49d59380f36c61d1a7b53e95b2cc337bb1c13a935a1e81951e22d248c43231cf49d59380f36c61d1a7b53e95b2cc337bb1c13a935a1e81951e22d248c43231cf49d59380f36c61d1a7b53e95b2cc337bb1c13a935a1e81951e22d248c43231cf49d59380f36',
    sealed:
      '9fff2cb7033a3c5526e5bffcceff73de736cb9ed52a4dce47bd771407d3f30938422fb7f2e909433515cefdee1f1587b57306db7e78f07c6f7f60212eef388ace709f855ae3d1af5a57c0e96be91b52b2685477188e066a36d4a6814b3cf4b1a6ba9d6dce357b18e65e45390ffc9614c7024a230a2b05ad057ec631ea6c76a87b22d40913fb10d3ca60f031c041281857d299ee019f9328af8c8c64617964be06b762fb26535a075158d168af7b945ca0c566099a96075b78f39c3826ee92fc9e4505d171004486eda4809337e609044751ace86394df7cb',
  },
];

test('secretbox seals exactly as libsodium does, and opens what libsodium sealed', () => {
  for (const v of VECTORS) {
    const key = Buffer.from(v.key, 'hex');
    const nonce = Buffer.from(v.nonce, 'hex');
    const message = Buffer.from(v.message, 'hex');
    assert.equal(secretboxSeal(message, nonce, key).toString('hex'), v.sealed, `message of ${message.length} bytes`);
    assert.deepEqual(secretboxOpen(Buffer.from(v.sealed, 'hex'), nonce, key), message);
  }
});

test('secretbox refuses a tampered box, a wrong key and a wrong nonce', () => {
  const v = VECTORS[5]!;
  const key = Buffer.from(v.key, 'hex');
  const nonce = Buffer.from(v.nonce, 'hex');
  const sealed = Buffer.from(v.sealed, 'hex');
  for (const i of [0, 15, 16, sealed.length - 1]) {
    const tampered = Buffer.from(sealed);
    tampered[i]! ^= 1;
    assert.equal(secretboxOpen(tampered, nonce, key), null, `byte ${i} flipped`);
  }
  const otherKey = Buffer.from(key);
  otherKey[31]! ^= 0x80;
  assert.equal(secretboxOpen(sealed, nonce, otherKey), null);
  const otherNonce = Buffer.from(nonce);
  otherNonce[23]! ^= 1;
  assert.equal(secretboxOpen(sealed, otherNonce, key), null);
  assert.equal(secretboxOpen(sealed.subarray(0, 15), nonce, key), null);
});

test('poly1305: RFC 8439 section 2.5.2 and libsodium', () => {
  const rfcKey = Buffer.from('85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b', 'hex');
  assert.equal(poly1305(Buffer.from('Cryptographic Forum Research Group'), rfcKey).toString('hex'), 'a8061dc1305136c6c22b8baf0c0127a9');
  const key = Buffer.from('9f13aa0c47a42f620eb7daa58f34c31ee4ccd58feedf3121a53762cec2eb0cbd', 'hex');
  assert.equal(poly1305(Buffer.from('Cryptographic Forum Research Group'), key).toString('hex'), 'aead7e3897a4e4f6ab7ba317bfa7648a');
});
