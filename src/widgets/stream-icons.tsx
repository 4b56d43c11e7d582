// Icons the stream and webhook manifests name that the shell does not register.
import {
  CloudSyncOutlined,
  MailOutlined,
  NodeIndexOutlined,
  SendOutlined,
  ThunderboltOutlined,
} from "@ant-design/icons";
import { registerIcons } from "../../renderer/index.ts";

registerIcons({
  stream: NodeIndexOutlined,
  webhook: ThunderboltOutlined,
  mail: MailOutlined,
  send: SendOutlined,
  region: CloudSyncOutlined,
});
