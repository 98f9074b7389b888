() => {
  // Evidence-time chips (<button class="mr-chip" data-t="12.4">) anywhere on the page seek the
  // player: one delegated listener, because chat messages and panels are re-rendered often.
  const secondsOf = (chip) => {
    if (chip.dataset.t) return parseFloat(chip.dataset.t);
    const parts = chip.textContent.replace(/[^0-9:.]/g, "").split(":").map(Number);
    return parts.reduce((total, part) => total * 60 + part, 0);
  };
  document.addEventListener("click", (event) => {
    const chip = event.target.closest(".mr-chip");
    if (!chip) return;
    const video = document.querySelector("#player video");
    if (!video) return;
    event.preventDefault();
    const seek = () => {
      video.currentTime = secondsOf(chip);
      video.play().catch(() => {});  // autoplay may be refused; the seek itself still shows
    };
    if (video.readyState >= 1) seek();
    else video.addEventListener("loadedmetadata", seek, { once: true });
    video.scrollIntoView({ block: "nearest", behavior: "smooth" });
    document.querySelectorAll(".mr-chip.mr-chip-active").forEach((c) => c.classList.remove("mr-chip-active"));
    chip.classList.add("mr-chip-active");
  }, true);
}
