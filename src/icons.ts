// The icons manifests may name (`nav.icon`, `action.icon`), registered by name so the bundle only
// carries these. Those the side navigation and the first list (the endpoints) draw load with the
// signed-in shell; the others (icons-later.ts) load together when a page first draws one of them.
import {
  ApiOutlined,
  AppstoreOutlined,
  BarChartOutlined,
  CodeOutlined,
  CopyOutlined,
  DashboardOutlined,
  EllipsisOutlined,
  InboxOutlined,
  PauseCircleOutlined,
  PlayCircleOutlined,
  PlusOutlined,
  UserOutlined,
} from "@ant-design/icons";
import { registerIcons, registerLaterIcons } from "../renderer/index.ts";

registerIcons({
  api: ApiOutlined,
  apps: AppstoreOutlined,
  chart: BarChartOutlined,
  code: CodeOutlined,
  copy: CopyOutlined,
  dashboard: DashboardOutlined,
  more: EllipsisOutlined,
  archive: InboxOutlined,
  pause: PauseCircleOutlined,
  play: PlayCircleOutlined,
  plus: PlusOutlined,
  user: UserOutlined,
});

registerLaterIcons(["delete", "edit", "key", "lock", "reload", "settings", "tag", "team", "role"], () =>
  import("./icons-later.ts").then((module) => module.LATER_ICONS),
);
