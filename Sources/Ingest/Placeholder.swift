import Transcode
