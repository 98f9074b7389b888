"""The symbolic memory of one video: SQLite tables, created with sqlite-utils.

`SCHEMA_DOC` describes every table and column in words; the agent's prompts quote it, so keep
it in step with `create_tables`. Times are seconds from the start of the video; boxes are
pixels of the source frame, x1/y1 top left, x2/y2 bottom right.
"""

from __future__ import annotations

import sqlite_utils

from backend.graph import schema as graph_schema

TABLES = ("video", "instances", "detections", "actions", "activities", "tags", "timeline", "speech",
          "speech_words", "ocr", "shots", "scenes", *graph_schema.GRAPH_TABLES)

SCHEMA_DOC = """\
video(id TEXT, name TEXT, sha256 TEXT, fps REAL, frames INTEGER, duration REAL, width INTEGER,
      height INTEGER, has_audio INTEGER, codec TEXT, ingested_at TEXT, models TEXT)
  -- one row: the video's facts; models is JSON naming the model behind each stage.
instances(id INTEGER, category TEXT, first_seen REAL, last_seen REAL, first_frame INTEGER,
          last_frame INTEGER, frame_count INTEGER, appearance TEXT, action TEXT, colours TEXT)
  -- one row per tracked object (space-dominant memory); ids are 1..K in order of appearance;
  -- category e.g. 'person', or 'moving object' (anything that moved in front of a static
  -- camera: appearance gives its measured size, colour and shape); action describes its
  -- motion and, for people, posture and facing, e.g. 'moves down the frame, sitting, back to
  -- the camera'; colours names the colours of its pixels with their shares, a person's by
  -- garment, e.g. 'top: grey 41%, blue 30%; bottom: blue 55%, black 30%' (appearance says the
  -- one colour that clearly leads, where one does).
detections(instance_id INTEGER, frame INTEGER, t REAL, x1 REAL, y1 REAL, x2 REAL, y2 REAL,
           confidence REAL, posture TEXT, arm_raised INTEGER, facing TEXT)
  -- one row per instance per sampled frame: its trajectory (confidence 0: the box is
  -- interpolated across a short occlusion, the object hidden but there). People in view at T:
  -- SELECT COUNT(DISTINCT instance_id) FROM detections WHERE frame = (SELECT MIN(frame) FROM
  -- detections WHERE t >= T). For people, body keypoints give posture ('standing',
  -- 'sitting', 'bending' or 'lying'), arm_raised (1 = a hand above the shoulder, else 0) and
  -- facing ('camera', 'away' = back to the camera, or 'side'); NULL on interpolated boxes and
  -- where the keypoints could not tell (e.g. legs out of view).
actions(id INTEGER, instance_id INTEGER, action TEXT, t_start REAL, t_end REAL, score REAL,
        evidence TEXT, other_id INTEGER)
  -- one row per interval in which a tracked person does something, read from body keypoints
  -- and the objects at hand: action is one of 'standing', 'walking', 'running', 'sitting',
  -- 'lying', 'bending', 'jumping', 'falling', 'sitting down', 'standing up' (changes of
  -- posture), 'turning round', 'raising arms', 'waving', 'punching', 'pointing', 'climbing',
  -- 'dancing', 'holding', 'carrying', 'riding', 'drinking', 'eating', 'using a phone',
  -- 'swinging', 'throwing', 'facing each other', 'hands joined', 'hugging', 'pushing',
  -- 'fighting', 'passing a ball'; other_id is the instance acted with (the held cup, the
  -- ridden horse, the other person), else NULL; evidence says what the rule saw; score is the
  -- share of the person's frames in the interval that support it. Who rides something:
  -- SELECT instance_id, other_id, t_start, t_end FROM actions WHERE action = 'riding'.
activities(id INTEGER, t_start REAL, t_end REAL, activity TEXT, score REAL)
  -- what a Kinetics-400 video classifier (I3D) says is happening over an interval, from about
  -- a second of motion in it: one of 400 human activities ('washing dishes', 'juggling
  -- balls', 'salsa dancing', 'cooking egg'); up to five rows per interval, score its
  -- probability (0-1). Who does it is not said: the actions table has the people.
tags(id INTEGER, t_start REAL, t_end REAL, tag TEXT, wnid TEXT, score REAL)
  -- what an ImageNet-1k classifier sees in the whole picture over an interval, beyond the
  -- tracked kinds: animals, tools, sports gear ('sulphur-crested cockatoo', 'barbell',
  -- 'cliff'), and the place a Places365 classifier names ('kitchen', 'basketball court,
  -- indoor', 'ice skating rink, outdoor'); wnid is its WordNet id, score its probability (0-1).
timeline(id INTEGER, t_start REAL, t_end REAL, description TEXT, source TEXT, speech TEXT,
         ocr TEXT, instance_ids TEXT)
  -- one row per time step (time-dominant memory); description of what is seen, source names
  -- the captioner that wrote it; speech and ocr are the words heard and text read in the step;
  -- instance_ids is a JSON list of the instances visible in it.
speech(id INTEGER, t_start REAL, t_end REAL, text TEXT)
  -- one row per transcribed speech segment.
speech_words(segment_id INTEGER, t_start REAL, t_end REAL, word TEXT)
  -- one row per spoken word, with its time.
ocr(id INTEGER, t REAL, frame INTEGER, text TEXT, x1 REAL, y1 REAL, x2 REAL, y2 REAL,
    confidence REAL)
  -- one row per line of on-screen text read at time t.
shots(id INTEGER, t_start REAL, t_end REAL, colour TEXT, footage TEXT, light TEXT, place TEXT)
  -- one row per shot (a continuous take between two cuts), in order; no cut = one shot. Cut
  -- times are the t_start of every shot after the first. The whole picture of the shot:
  -- colour is 'colour' or 'black and white'; footage 'camera' or 'animation' (drawn or
  -- rendered); light 'dark', 'dim' or 'lit'; place 'indoors', 'outdoors' or NULL (cannot tell).
scenes(id INTEGER, t_start REAL, t_end REAL, shot_id INTEGER, cut_at REAL, camera TEXT,
       camera_speed REAL, motion TEXT, moving_share REAL, brightness TEXT, luma REAL, colours TEXT)
  -- one row per fine time step (the steps of timeline before merging): the picture. shot_id is
  -- the shot the step starts in; cut_at the time of a cut inside the step, else NULL; camera is
  -- 'static', 'pan left', 'pan right', 'tilt up', 'tilt down', 'zoom in', 'zoom out' or
  -- 'unknown' (too little texture to tell), camera_speed its rate (share of the frame per s);
  -- motion is 'still', 'some' or 'much': how much of the picture moves apart from the camera
  -- (moving_share, 0-1); brightness 'dark', 'dim' or 'bright' from luma (mean grey level
  -- 0-255); colours names the colours filling the frame with their shares, e.g.
  -- 'green 60%, white 25%' (find one with colours LIKE '%green%').
""" + graph_schema.GRAPH_DOC


def create_tables(db: sqlite_utils.Database) -> None:
    db["video"].create({
        "id": str, "name": str, "sha256": str, "fps": float, "frames": int, "duration": float,
        "width": int, "height": int, "has_audio": int, "codec": str, "ingested_at": str,
        "models": str,
    }, pk="id")
    db["instances"].create({
        "id": int, "category": str, "first_seen": float, "last_seen": float, "first_frame": int,
        "last_frame": int, "frame_count": int, "appearance": str, "action": str, "colours": str,
    }, pk="id")
    db["detections"].create({
        "instance_id": int, "frame": int, "t": float, "x1": float, "y1": float, "x2": float,
        "y2": float, "confidence": float, "posture": str, "arm_raised": int, "facing": str,
    }, foreign_keys=[("instance_id", "instances", "id")])
    db["detections"].create_index(["instance_id", "frame"])
    db["detections"].create_index(["t"])
    db["actions"].create({
        "id": int, "instance_id": int, "action": str, "t_start": float, "t_end": float,
        "score": float, "evidence": str, "other_id": int,
    }, pk="id", foreign_keys=[("instance_id", "instances", "id")])
    db["actions"].create_index(["instance_id"])
    db["actions"].create_index(["action"])
    db["activities"].create({"id": int, "t_start": float, "t_end": float, "activity": str,
                             "score": float}, pk="id")
    db["tags"].create({"id": int, "t_start": float, "t_end": float, "tag": str, "wnid": str,
                       "score": float}, pk="id")
    db["tags"].create_index(["tag"])
    db["timeline"].create({
        "id": int, "t_start": float, "t_end": float, "description": str, "source": str,
        "speech": str, "ocr": str, "instance_ids": str,
    }, pk="id")
    db["timeline"].create_index(["t_start"])
    db["speech"].create({"id": int, "t_start": float, "t_end": float, "text": str}, pk="id")
    db["speech_words"].create({"segment_id": int, "t_start": float, "t_end": float, "word": str},
                              foreign_keys=[("segment_id", "speech", "id")])
    db["speech_words"].create_index(["t_start"])
    db["ocr"].create({
        "id": int, "t": float, "frame": int, "text": str, "x1": float, "y1": float, "x2": float,
        "y2": float, "confidence": float,
    }, pk="id")
    db["ocr"].create_index(["t"])
    db["shots"].create({"id": int, "t_start": float, "t_end": float, "colour": str,
                        "footage": str, "light": str, "place": str}, pk="id")
    db["scenes"].create({
        "id": int, "t_start": float, "t_end": float, "shot_id": int, "cut_at": float,
        "camera": str, "camera_speed": float, "motion": str, "moving_share": float,
        "brightness": str, "luma": float, "colours": str,
    }, pk="id", foreign_keys=[("shot_id", "shots", "id")])
    db["scenes"].create_index(["t_start"])
    graph_schema.create(db)
