// profiler view: a click anywhere on a row opens its session; a changed filter applies at once.
// Everything works without this script (links and a submit button); it only saves clicks.
document.addEventListener("click", function (event) {
  if (event.target.closest("a, button, input, select, summary")) return;
  var row = event.target.closest("tr[data-href]");
  if (row) window.location.href = row.getAttribute("data-href");
});
document.addEventListener("change", function (event) {
  if (event.target.matches("form.filters select")) event.target.form.submit();
});
