// A push-fed async iterable of user messages: the streaming-input prompt of an SDK session.
export class Inbox {
  constructor() {
    this.items = [];
    this.waiting = null;
    this.closed = false;
  }

  push(text) {
    const message = {
      type: 'user',
      session_id: '',
      message: { role: 'user', content: text },
      parent_tool_use_id: null,
    };
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: message, done: false });
    } else {
      this.items.push(message);
    }
  }

  close() {
    this.closed = true;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this.items.length) return Promise.resolve({ value: this.items.shift(), done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

// The config the Python test passes as argv[2], and a summary printer for it to read back.
export function config() {
  return JSON.parse(process.argv[2]);
}

export function report(summary) {
  process.stdout.write(JSON.stringify(summary) + '\n');
}
