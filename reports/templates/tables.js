// Sortable, filterable tables: click a header to sort (numbers by value, using data-sort when a
// cell has one); type in a box with data-filter-for="<table id>" to keep rows containing the text.
(function () {
  function key(cell) {
    if (!cell) return "";
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    var n = parseFloat(raw.replace(/[×%,+]/g, ""));
    return isNaN(n) || !/^[-+×]?[\d.]/.test(raw) ? raw.toLowerCase() : n;
  }
  function compare(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === "number" ? -1 : 1;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, col) {
      th.setAttribute("data-sortable", "");
      th.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (x, y) {
          var c = compare(key(x.cells[col]), key(y.cells[col]));
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll("input[data-filter-for]").forEach(function (input) {
    var table = document.getElementById(input.getAttribute("data-filter-for"));
    if (!table) return;
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        var keep = !q || r.textContent.toLowerCase().indexOf(q) >= 0;
        r.hidden = !keep;
        if (keep) shown++;
      });
      var count = document.getElementById(input.getAttribute("data-filter-for") + "-count");
      if (count) count.textContent = q ? shown + " of " + table.tBodies[0].rows.length + " rows" : "";
    });
  });
  document.documentElement.setAttribute("data-ready", "true");
})();
