// flopcheck's own stand-in for a Web Worker where browsers refuse one: a page read from disk (file://) may not start
// `new Worker(url)`, and the theme's search runs in a worker, so without this the search box is hidden. The worker's
// script runs instead in a hidden same-origin iframe (about:blank) whose window plays the worker's global scope:
// what the page posts arrives there as a "message" event, what the script posts (self.postMessage) arrives back on
// this object, and importScripts loads scripts in order (a Promise, which the theme's worker awaits). The file name
// holds "iframe-worker" so that the theme's offline plugin adds no shim of its own from the network.
(function () {
  "use strict";
  if (location.protocol !== "file:" || typeof EventTarget === "undefined") {
    return;
  }

  function load(doc, url) {
    return new Promise(function (resolve, reject) {
      var script = doc.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("cannot load " + url)); };
      doc.body.appendChild(script);
    });
  }

  class FileWorker extends EventTarget {
    constructor(url) {
      super();
      var self = this;
      var frame = document.createElement("iframe");
      frame.style.display = "none";
      (document.body || document.documentElement).appendChild(frame);
      var scope = frame.contentWindow;
      var queue = [];
      this.onmessage = null;
      this.onerror = null;
      this._frame = frame;
      this._ready = false;
      this._send = function (data) {
        scope.dispatchEvent(new scope.MessageEvent("message", { data: data }));
      };
      this._queue = queue;
      scope.postMessage = function (data) {  // the worker's self.postMessage: back to the page
        var event = new MessageEvent("message", { data: data });
        if (typeof self.onmessage === "function") { self.onmessage(event); }
        self.dispatchEvent(event);
      };
      scope.importScripts = function () {
        var urls = Array.prototype.slice.call(arguments);
        return urls.reduce(function (done, u) {
          return done.then(function () { return load(scope.document, u); });
        }, Promise.resolve());
      };
      load(scope.document, url).then(function () {
        self._ready = true;
        queue.splice(0).forEach(self._send);
      }, function (err) {
        var event = new ErrorEvent("error", { message: err.message });
        if (typeof self.onerror === "function") { self.onerror(event); }
        self.dispatchEvent(event);
      });
    }

    postMessage(data) {
      if (this._ready) { this._send(data); } else { this._queue.push(data); }
    }

    terminate() {
      this._frame.remove();
    }
  }

  window.Worker = FileWorker;
})();
