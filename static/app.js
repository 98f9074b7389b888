() => {
  // Evidence-time chips (<button class="mr-chip" data-t="12.4">) anywhere on the page seek the
  // player: one delegated listener, because chat messages and panels are re-rendered often.
  // A library answer's chip also names its video (class mr-video-<video_id>). Unless that video
  // is the selected one, it is picked first, through the hidden #chip-video box, so that the
  // server selects it exactly as the library does; the seek then waits for the player to load it.
  // The chat's sanitizer drops data-* attributes, so there the time is read from the chip's text:
  // "▶ 0:18.6", or "highway.avi @ 18.6 s" for a library chip.
  const secondsOf = (chip) => {
    if (chip.dataset.t) return parseFloat(chip.dataset.t);
    const at = chip.textContent.match(/@\s*([0-9.]+)\s*s\s*$/);
    if (at) return parseFloat(at[1]);
    const parts = chip.textContent.replace(/[^0-9:.]/g, "").split(":").map(Number);
    return parts.reduce((total, part) => total * 60 + part, 0);
  };
  const videoOf = (chip) => (chip.className.match(/\bmr-video-([0-9a-f]+)\b/) || [])[1];
  const player = () => document.querySelector("#player video");
  const sourceOf = (video) => (video ? video.currentSrc || video.getAttribute("src") || "" : "");
  // The facts panel names the selected video's id; the player's URL need not.
  const isSelected = (videoId) =>
    (document.querySelector("#facts")?.textContent || "").includes(videoId);
  const seek = (video, t) => {
    const go = () => {
      video.currentTime = t;
      video.play().catch(() => {});  // autoplay may be refused; the seek itself still shows
    };
    if (video.readyState >= 1) go();
    else video.addEventListener("loadedmetadata", go, { once: true });
    video.scrollIntoView({ block: "nearest", behavior: "smooth" });
  };
  let picks = 0;
  let waiting = null;
  const pickThenSeek = (videoId, t) => {
    const box = document.querySelector("#chip-video textarea, #chip-video input");
    if (!box) return;
    const before = sourceOf(player());
    // A new value every time: the same chip clicked again after another video was picked by
    // hand must still be an input event.
    box.value = `${videoId} ${++picks}`;
    box.dispatchEvent(new Event("input", { bubbles: true }));
    const started = Date.now();
    clearInterval(waiting);
    waiting = setInterval(() => {
      const video = player();
      if (isSelected(videoId) && video && sourceOf(video) && sourceOf(video) !== before) {
        clearInterval(waiting);
        seek(video, t);
      } else if (Date.now() - started > 30000) {
        clearInterval(waiting);
      }
    }, 100);
  };
  document.addEventListener("click", (event) => {
    const chip = event.target.closest(".mr-chip");
    if (!chip) return;
    const videoId = videoOf(chip);
    const video = player();
    if (!videoId && !video) return;
    event.preventDefault();
    if (videoId && !(video && isSelected(videoId))) pickThenSeek(videoId, secondsOf(chip));
    else seek(video, secondsOf(chip));
    document.querySelectorAll(".mr-chip.mr-chip-active").forEach((c) => c.classList.remove("mr-chip-active"));
    chip.classList.add("mr-chip-active");
  }, true);
}
