(function () {
  "use strict";
  const q = new URLSearchParams(location.hash.slice(1)), id = q.get("id") || "";
  const say = (text, record) => {
    const r = document.getElementById("result");
    r.textContent = text;
    if (record) {
      const a = document.createElement("a");
      a.href = "../games/" + encodeURIComponent(id) + ".json.gz";
      a.textContent = " its record";
      r.appendChild(a);
    }
  };
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(id)) { say("No match named in the address (replay.html#id=MATCH)."); return; }
  document.title = "Chinese Ten \u00b7 " + id;
  window.ctReplay = (got, packed) => {
    if (got !== id) return;
    const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
    const text = new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    text.then((json) => {
      document.getElementById("result").textContent = JSON.parse(json).result;
      const data = document.createElement("script");
      data.type = "application/json"; data.id = "ct-data"; data.textContent = json;
      document.body.appendChild(data);
      const viewer = document.createElement("script");
      viewer.src = "viewer.js";
      document.body.appendChild(viewer);
    }, () => say("This browser cannot read the replay's data (it needs DecompressionStream): open", true));
  };
  const s = document.createElement("script");
  s.src = "replays/" + encodeURIComponent(id) + ".js";
  s.onerror = () => say("No replay of " + id + " written yet (each is written as the run goes and at its end; ct-referee report FOLDER writes every one, and --serve draws any): open", true);
  document.body.appendChild(s);
})();
