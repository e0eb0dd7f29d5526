/* pb_headless administration pages: small progressive enhancements, nothing a form needs to work. */
(function () {
  "use strict";

  // <form data-confirm="…">: ask before posting (reissue, disable, delete…), naming what is affected.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  });

  // <button data-copy="id" data-copy-status="id">: copy an element's text and say so visibly.
  function copyText(text, source) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).then(function () { return true; }, function () { return legacyCopy(source); });
    }
    return Promise.resolve(legacyCopy(source));
  }

  function legacyCopy(source) {
    var range = document.createRange();
    range.selectNodeContents(source);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    try { return document.execCommand("copy"); } catch (error) { return false; }
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.dataset.copy);
    var status = document.getElementById(button.dataset.copyStatus || "");
    if (!source) return;
    copyText(source.textContent.trim(), source).then(function (copied) {
      if (status) status.textContent = copied ? "Copied" : "Select the value and press Ctrl+C (⌘C) to copy";
      button.textContent = copied ? "Copied ✓" : "Copy";
      window.setTimeout(function () { button.textContent = "Copy"; }, 4000);
    });
  });

  // <tbody data-rows="template-id">, <button data-add-row="tbody-id">, <button data-remove-row>: rows
  // added from a <template> whose names contain __i__ (replaced by a fresh index) and removed again.
  document.addEventListener("click", function (event) {
    var add = event.target.closest && event.target.closest("[data-add-row]");
    if (add) {
      event.preventDefault();
      var body = document.getElementById(add.dataset.addRow);
      var hidden = body.closest("[hidden]");
      if (hidden) hidden.hidden = false;  // the table of new rows shows once it has one
      var template = document.getElementById(body.dataset.rows);
      var index = Number(body.dataset.next || body.children.length);
      body.dataset.next = String(index + 1);
      var html = template.innerHTML.replace(/__i__/g, String(index));
      body.insertAdjacentHTML("beforeend", html);
      var first = body.lastElementChild && body.lastElementChild.querySelector("input");
      if (first) first.focus();
      return;
    }
    var remove = event.target.closest && event.target.closest("[data-remove-row]");
    if (remove) {
      event.preventDefault();
      var row = remove.closest("tr");
      if (row) row.remove();
    }
  });
})();
