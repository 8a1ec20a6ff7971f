// The thirteen WASI preview1 calls flite.wasm imports, in JavaScript, with the WAV it writes kept
// in memory. Not node:wasi: Node 20's WASI calls into its C++ (uvwasi) as V8 "fast API" calls, and
// uvwasi's allocations there report external memory to V8, which can start a garbage collection
// inside the fast call, where V8 forbids one (nodejs/node#46777). Each synthesis leaves a ~20 MB
// wasm memory behind, so external memory crosses V8's limit every few sentences, and now and then
// it does so inside flite's path_open or fd_close: the helper then dies with SIGSEGV.
// These functions are plain JavaScript imports: a collection may run inside any of them.
// Plain JavaScript so the helper process needs no TypeScript loader.

const ERRNO = { SUCCESS: 0, BADF: 8, INVAL: 28, NOENT: 44 };
const FILETYPE = { CHARACTER_DEVICE: 2, DIRECTORY: 3, REGULAR_FILE: 4 };
const OFLAGS_CREAT = 1;
const WHENCE = { SET: 0, CUR: 1, END: 2 };
const OUT_FD = 3;

/** flite called exit(): unwinds out of the module. */
class Exit {
  constructor(code) {
    this.code = code;
  }
}

/** A file flite creates under the one preopened directory: its bytes, grown as it writes. */
class MemoryFile {
  bytes = new Uint8Array(1 << 16);
  size = 0;
  position = 0;

  write(chunk) {
    const end = this.position + chunk.length;
    if (end > this.bytes.length) {
      const grown = new Uint8Array(Math.max(end, this.bytes.length * 2));
      grown.set(this.bytes.subarray(0, this.size));
      this.bytes = grown;
    }
    this.bytes.set(chunk, this.position);
    this.position = end;
    this.size = Math.max(this.size, end);
  }
}

/**
 * Runs flite once: `args` as its command line (without the program name), with `/out` preopened
 * as an empty in-memory directory. Resolves to its exit code, the files it wrote there (name →
 * bytes) and what it wrote to stderr.
 */
export async function runFlite(module, args) {
  const argv = ['flite', ...args].map((arg) => Buffer.from(`${arg}\0`));
  const files = new Map();
  const fds = new Map();
  let nextFd = OUT_FD + 1;
  let stderr = '';
  let memory;
  const view = () => new DataView(memory.buffer);
  const bytes = (pointer, length) => new Uint8Array(memory.buffer, pointer, length);
  const string = (pointer, length) => Buffer.from(bytes(pointer, length)).toString('utf8');
  const iovecs = (pointer, count) => {
    const list = [];
    for (let i = 0; i < count; i += 1) list.push(bytes(view().getUint32(pointer + i * 8, true), view().getUint32(pointer + i * 8 + 4, true)));
    return list;
  };

  const imports = {
    args_sizes_get(countPointer, sizePointer) {
      view().setUint32(countPointer, argv.length, true);
      view().setUint32(sizePointer, argv.reduce((sum, arg) => sum + arg.length, 0), true);
      return ERRNO.SUCCESS;
    },
    args_get(pointers, buffer) {
      let at = buffer;
      argv.forEach((arg, i) => {
        view().setUint32(pointers + i * 4, at, true);
        bytes(at, arg.length).set(arg);
        at += arg.length;
      });
      return ERRNO.SUCCESS;
    },
    clock_time_get(_id, _precision, timePointer) {
      view().setBigUint64(timePointer, process.hrtime.bigint(), true);
      return ERRNO.SUCCESS;
    },
    fd_prestat_get(fd, pointer) {
      if (fd !== OUT_FD) return ERRNO.BADF;
      view().setUint8(pointer, 0);
      view().setUint32(pointer + 4, '/out'.length, true);
      return ERRNO.SUCCESS;
    },
    fd_prestat_dir_name(fd, pointer, length) {
      if (fd !== OUT_FD) return ERRNO.BADF;
      bytes(pointer, length).set(Buffer.from('/out').subarray(0, length));
      return ERRNO.SUCCESS;
    },
    fd_fdstat_get(fd, pointer) {
      const type = fd <= 2 ? FILETYPE.CHARACTER_DEVICE : fd === OUT_FD ? FILETYPE.DIRECTORY : fds.has(fd) ? FILETYPE.REGULAR_FILE : undefined;
      if (type === undefined) return ERRNO.BADF;
      bytes(pointer, 24).fill(0);
      view().setUint8(pointer, type);
      view().setBigUint64(pointer + 8, 0xffffffffn, true);
      view().setBigUint64(pointer + 16, 0xffffffffn, true);
      return ERRNO.SUCCESS;
    },
    fd_fdstat_set_flags: () => ERRNO.SUCCESS,
    path_open(dirFd, _dirFlags, pathPointer, pathLength, openFlags, _rights, _inherited, _fdFlags, fdPointer) {
      if (dirFd !== OUT_FD) return ERRNO.BADF;
      const name = string(pathPointer, pathLength);
      if (!files.has(name)) {
        if (!(openFlags & OFLAGS_CREAT)) return ERRNO.NOENT;
        files.set(name, new MemoryFile());
      }
      const fd = nextFd++;
      fds.set(fd, files.get(name));
      view().setUint32(fdPointer, fd, true);
      return ERRNO.SUCCESS;
    },
    fd_write(fd, iovs, count, writtenPointer) {
      const file = fds.get(fd);
      if (!file && fd !== 1 && fd !== 2) return ERRNO.BADF;
      let written = 0;
      for (const chunk of iovecs(iovs, count)) {
        if (file) file.write(chunk);
        else if (fd === 2) stderr += Buffer.from(chunk).toString('utf8');
        written += chunk.length;
      }
      view().setUint32(writtenPointer, written, true);
      return ERRNO.SUCCESS;
    },
    fd_read(fd, iovs, count, readPointer) {
      const file = fds.get(fd);
      if (!file && fd !== 0) return ERRNO.BADF;
      let read = 0;
      for (const chunk of file ? iovecs(iovs, count) : []) {
        const part = file.bytes.subarray(file.position, Math.min(file.size, file.position + chunk.length));
        chunk.set(part);
        file.position += part.length;
        read += part.length;
      }
      view().setUint32(readPointer, read, true);
      return ERRNO.SUCCESS;
    },
    fd_seek(fd, offset, whence, positionPointer) {
      const file = fds.get(fd);
      if (!file) return ERRNO.BADF;
      const base = whence === WHENCE.SET ? 0 : whence === WHENCE.CUR ? file.position : whence === WHENCE.END ? file.size : undefined;
      const position = base === undefined ? -1 : base + Number(offset);
      if (position < 0) return ERRNO.INVAL;
      file.position = position;
      view().setBigUint64(positionPointer, BigInt(position), true);
      return ERRNO.SUCCESS;
    },
    fd_close(fd) {
      if (fd <= OUT_FD) return ERRNO.SUCCESS;
      return fds.delete(fd) ? ERRNO.SUCCESS : ERRNO.BADF;
    },
    proc_exit(code) {
      throw new Exit(code);
    },
  };

  const { exports } = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: imports });
  memory = exports.memory;
  let code = 0;
  try {
    exports._start();
  } catch (error) {
    if (!(error instanceof Exit)) throw error;
    code = error.code;
  }
  const written = new Map([...files].map(([name, file]) => [name, file.bytes.slice(0, file.size)]));
  return { code, files: written, stderr };
}
