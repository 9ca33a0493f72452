// AudioWorklet: the microphone as 16 kHz mono int16, posted in 100 ms chunks with the running
// index of each chunk's first sample. When the context runs at another rate (Firefox, Safari),
// it resamples here with a windowed-sinc low-pass (cut-off 7 kHz, Blackman window) evaluated at
// the exact output positions k * inRate / 16000, counted from the real number of input samples,
// so the sample count against time stays true (the host fits it against performance.now()).
// An output sample leaves half a kernel (8 output periods, 0.5 ms) after its input arrived.
"use strict";

const OUT_RATE = 16000;
const CHUNK = 1600; // 100 ms at 16 kHz
const CUTOFF_HZ = 7000;

class PcmCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / OUT_RATE; // input samples per output sample
    this.direct = Math.abs(this.ratio - 1) < 1e-9;
    this.out = new Int16Array(CHUNK);
    this.filled = 0;
    this.produced = 0; // output samples made since the stream began (the running index)
    if (!this.direct) {
      // Kernel half-width in input samples: 8 output periods, enough for ~60 dB stop band.
      this.half = Math.ceil(8 * this.ratio);
      this.fc = CUTOFF_HZ / sampleRate; // cycles per input sample
      this.buf = new Float32Array(4096 + 2 * this.half);
      this.bufStart = -this.half; // input index of buf[0]: starts with a half-width of silence
      this.bufLen = this.half;
      this.nextOut = 0; // next output sample index
    }
    this.port.onmessage = (event) => {
      if (event.data === "reset") { this.produced = 0; this.filled = 0; }
    };
  }

  emit(value) {
    const v = Math.max(-1, Math.min(1, value));
    this.out[this.filled++] = v < 0 ? Math.round(v * 32768) : Math.round(v * 32767);
    if (this.filled === CHUNK) {
      const pcm = this.out;
      // produced already counts this chunk's last sample.
      this.port.postMessage({first: this.produced - CHUNK, pcm}, [pcm.buffer]);
      this.out = new Int16Array(CHUNK);
      this.filled = 0;
    }
  }

  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    const frames = input ? input.length : 128;
    if (this.direct) {
      for (let i = 0; i < frames; i++) { this.produced++; this.emit(input ? input[i] : 0); }
      return true;
    }
    // Append the block (silence if the input is absent) to the history.
    if (this.bufLen + frames > this.buf.length) {
      const keep = this.bufLen;
      const bigger = new Float32Array(Math.max(this.buf.length * 2, keep + frames));
      bigger.set(this.buf.subarray(0, keep));
      this.buf = bigger;
    }
    for (let i = 0; i < frames; i++) this.buf[this.bufLen + i] = input ? input[i] : 0;
    this.bufLen += frames;
    const lastIn = this.bufStart + this.bufLen - 1;
    // Make every output sample whose kernel is complete.
    for (;;) {
      const pos = this.nextOut * this.ratio; // input coordinate of this output sample
      if (Math.floor(pos) + this.half > lastIn) break;
      let acc = 0, norm = 0;
      const lo = Math.ceil(pos - this.half), hi = Math.floor(pos + this.half);
      for (let j = lo; j <= hi; j++) {
        const x = j - pos;
        const w = 0.42 + 0.5 * Math.cos(Math.PI * x / this.half) + 0.08 * Math.cos(2 * Math.PI * x / this.half);
        const arg = 2 * this.fc * x;
        const h = w * (arg === 0 ? 1 : Math.sin(Math.PI * arg) / (Math.PI * arg));
        acc += h * this.buf[j - this.bufStart];
        norm += h;
      }
      this.nextOut++;
      this.produced++;
      this.emit(acc / norm);
    }
    // Drop history no kernel will read again.
    const needFrom = Math.ceil(this.nextOut * this.ratio - this.half);
    const drop = needFrom - this.bufStart;
    if (drop > 0) {
      this.buf.copyWithin(0, drop, this.bufLen);
      this.bufLen -= drop;
      this.bufStart += drop;
    }
    return true;
  }
}

registerProcessor("pcm-capture", PcmCapture);
